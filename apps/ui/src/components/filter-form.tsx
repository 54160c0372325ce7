import { useId, useState } from 'preact/hooks';

export interface FilterField {
  name: string;
  label: string;
  /** A select of these values (plus "any") instead of a text box. */
  options?: readonly string[];
  type?: 'text' | 'datetime-local';
}

export type FilterValues = Record<string, string>;

/** Labelled filter inputs; `onApply` gets the non-empty ones when the form is submitted. */
export function FilterForm({
  label,
  fields,
  initial = {},
  onApply,
  submitLabel = 'Apply',
}: {
  label: string;
  fields: FilterField[];
  initial?: FilterValues;
  onApply: (values: FilterValues) => void;
  submitLabel?: string;
}) {
  const [values, setValues] = useState<FilterValues>(initial);
  const idBase = useId();
  const set = (name: string, value: string) => setValues((v) => ({ ...v, [name]: value }));
  return (
    <form
      aria-label={label}
      class="filters"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== '')));
      }}
    >
      {fields.map((f) => (
        <label key={f.name} htmlFor={`${idBase}-${f.name}`}>
          {f.label}
          {f.options ? (
            <select id={`${idBase}-${f.name}`} name={f.name} value={values[f.name] ?? ''} onChange={(e) => set(f.name, e.currentTarget.value)}>
              <option value="">any</option>
              {f.options.map((o) => (
                <option key={o} value={o}>
                  {o}
                </option>
              ))}
            </select>
          ) : (
            <input
              id={`${idBase}-${f.name}`}
              name={f.name}
              type={f.type ?? 'text'}
              value={values[f.name] ?? ''}
              onInput={(e) => set(f.name, e.currentTarget.value)}
            />
          )}
        </label>
      ))}
      <button type="submit">{submitLabel}</button>
    </form>
  );
}

/** A datetime-local value (the reader's time zone) as RFC 3339, for the API. */
export function rfc3339(local: string | undefined): string | undefined {
  return local ? new Date(local).toISOString() : undefined;
}
