'use strict';
// Numbers as the text table prints them (src/base/number_format.cc), for both pages.
function formatMs(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '-';  // null: not a number
  if (ms < 0) return '-' + formatMs(-ms);  // a child's work before its parent's reset
  if (ms !== 0 && ms < 0.001) return ms.toFixed(6);
  if (ms >= 1e6) return ms.toFixed(0);
  return String(Number(ms.toPrecision(6)));  // %.6g: six digits, no trailing zeros
}
// As C++'s %.*f: an exact tie goes to the even digit (1.125 MiB reads 1.12 MiB),
// where toFixed would round it up.
function fixed(value, digits) {
  const scale = Math.pow(10, digits), scaled = value * scale;
  if (Math.abs(scaled % 1) === 0.5 && Number.isSafeInteger(Math.trunc(scaled))) {
    const even = 2 * Math.round(scaled / 2);
    return (even / scale).toFixed(digits);
  }
  return value.toFixed(digits);
}
function formatBytes(bytes) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= (unit === 0 ? 1024 : 1023.995) && unit < units.length - 1) {
    value /= 1024;
    ++unit;
  }
  return fixed(value, unit === 0 ? 0 : 2) + ' ' + units[unit];
}
// As FormatGrouped: thousands separated by commas ("2,345.6").
function formatGrouped(value, digits) {
  const [whole, fraction] = fixed(value, digits).split('.');
  const sign = whole[0] === '-' ? '-' : '';
  const grouped = whole.slice(sign.length).replace(/\B(?=(\d{3})+$)/g, ',');
  return sign + grouped + (fraction != null ? '.' + fraction : '');
}
