/** A cron field's name (as messages say it) and the values it takes. */
interface CronField {
  name: string;
  min: number;
  max: number;
}

const SECOND: CronField = { name: 'second', min: 0, max: 59 };
const FIELDS: readonly CronField[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  // 0 and 7 are both Sunday.
  { name: 'day-of-week', min: 0, max: 7 },
];

const STEP = /^(.*)\/(\d+)$/;
/** cron-parser's `H`: a value drawn at random each time the expression is parsed (`THU` is not one). */
const HASHED = /(?:^|[^a-z])h(?:$|[^a-z])/i;
const NUMERIC = /^(\d+)(?:-(\d+))?$/;

/** What is out of range in one `,`-separated part of a field (`a`, `a-b`, `*`, any of them `/step`), or null. */
function partProblem(part: string, field: CronField): string | null {
  // Parsed again for every next run, a random value moves: an hourly job would run twice in an
  // hour or skip one. No seed makes it stable across replicas and restarts without storing it.
  if (HASHED.test(part)) return `${field.name} ${part} is not supported: H (a random value) would change each time the schedule is computed`;
  const stepped = STEP.exec(part);
  const base = stepped ? (stepped[1] ?? '') : part;
  if (stepped) {
    // As cron(8): a step runs from 1 to the field's largest value; `*/999999999` is a typo, not a schedule.
    const step = Number(stepped[2]);
    if (step < 1 || step > field.max) return `${field.name} step ${stepped[2]} is out of range (1-${field.max})`;
  }
  const numeric = NUMERIC.exec(base);
  if (!numeric) return null;
  for (const text of [numeric[1], numeric[2]]) {
    if (text === undefined) continue;
    const value = Number(text);
    if (value < field.min || value > field.max) {
      return `${field.name} ${numeric[2] === undefined ? 'value' : 'range'} ${base} is out of range (${field.min}-${field.max})`;
    }
  }
  return null;
}

/**
 * The first step, value or range outside its field's range in a cron expression (5 fields, or
 * 6 with a leading seconds field), naming the field: `minute step 999999999 is out of range
 * (1-59)`. Null when every numeric part is in range; names, `L`, `#` and `@` macros are left to
 * the cron parser, which still checks the syntax. cron-parser itself takes any step (a step past
 * the field's end silently means "only the first value") and names no field when it refuses one.
 */
export function cronFieldProblem(expr: string): string | null {
  const text = expr.trim();
  if (text.startsWith('@')) return null;
  const parts = text.split(/\s+/);
  const fields = parts.length === 6 ? [SECOND, ...FIELDS] : FIELDS;
  for (const [i, field] of fields.entries()) {
    for (const part of (parts[i] ?? '').split(',')) {
      const problem = partProblem(part, field);
      if (problem) return problem;
    }
  }
  return null;
}
