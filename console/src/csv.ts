// Saving a CSV the console built (a run's chats, run-csv.ts) or read from the API (an audience's).

/**
 * Saves CSV text as a file, beginning with a UTF-8 BOM (spreadsheets then read it as UTF-8):
 * the API's export has one, but reading an answer as text drops it, so it is put back here.
 */
export function downloadCsv(filename: string, text: string): void {
  const bom = text.startsWith('\ufeff') ? '' : '\ufeff';
  const url = URL.createObjectURL(new Blob([bom + text], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
