// Types for the generated standalone validator (see build.ts).
import type { ErrorObject } from 'ajv';

interface StandaloneValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}
declare const validate: StandaloneValidator;
export default validate;
