export default function ThrowsError({ reason }) {
  console.warn('ThrowsError: about to throw');
  throw new Error(`ThrowsError: intentional render failure (${reason})`);
}
