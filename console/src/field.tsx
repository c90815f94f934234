// A form input's error beside it: the input is marked invalid and described by the message,
// so a screen reader reads the message with the field.

export function invalidProps(id: string, errors: string[] | undefined): Record<string, string> {
  return errors?.length ? { 'aria-invalid': 'true', 'aria-describedby': `${id}-error` } : {};
}

export function FieldNote({ id, errors }: { id: string; errors: string[] | undefined }) {
  if (!errors?.length) return null;
  return (
    <span id={`${id}-error`} class="error field-error">
      {errors.join('; ')}
    </span>
  );
}
