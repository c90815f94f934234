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

/**
 * The API's field errors placed on the inputs they name: `place` maps a field path to an input id
 * (undefined: no input shows it); what no input shows goes under `form`, with its field named.
 */
export function placeFieldErrors(details: { field: string; message: string }[], place: (field: string) => string | undefined): Map<string, string[]> {
  const placed = new Map<string, string[]>();
  for (const { field, message } of details) {
    const id = place(field);
    const key = id ?? 'form';
    placed.set(key, [...(placed.get(key) ?? []), id ? message : `${field}: ${message}`]);
  }
  return placed;
}
