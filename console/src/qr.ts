// A WhatsApp pairing payload drawn as a QR code image (a data: URL: the page's CSP allows
// images from data:, and nothing leaves the browser to draw it).
import qrcode from 'qrcode-generator';

export function qrDataUrl(payload: string): string {
  const code = qrcode(0, 'M');
  code.addData(payload);
  code.make();
  return code.createDataURL(5, 2);
}
