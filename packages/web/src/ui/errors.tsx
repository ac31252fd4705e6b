import { ApiError, errorConcerns, inFormWords } from '../api/client.ts'

/** The API's error for one field (matched by JSON pointer prefix), shown next to that field. */
export function FieldError({
  error,
  field,
  id,
  exact = false,
  label,
}: {
  error: unknown
  field: string
  id?: string
  /** Only an error about exactly this field, not about one inside it. */
  exact?: boolean
  /** The field's label, which replaces the API's name for it in the message. */
  label?: string
}) {
  if (!(error instanceof ApiError) || !errorConcerns(error, field, exact)) return null
  return (
    <p className="field-error" role="alert" id={id}>
      {inFormWords(error, label)}
    </p>
  )
}

/** An error that no field claims: shown at the top of the form or page. */
export function ErrorBox({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  if (!error) return null
  if (fields.some((field) => errorConcerns(error, field))) return null
  return (
    <div className="error-box" role="alert">
      {error instanceof Error ? error.message : String(error)}
    </div>
  )
}
