// Validates a gpuwise JSON document against its schema in schemas/ (JSON Schema 2020-12, ajv).
// Usage: node validate.mjs SCHEMA.json DOCUMENT.json. Exit 0 when valid; prints the errors otherwise.
import Ajv2020 from 'ajv/dist/2020.js';
import { readFileSync } from 'node:fs';

const [schemaPath, documentPath] = process.argv.slice(2);
const ajv = new Ajv2020({ allErrors: true, strict: true });
const validate = ajv.compile(JSON.parse(readFileSync(schemaPath, 'utf8')));
const ok = validate(JSON.parse(readFileSync(documentPath, 'utf8')));
if (!ok) console.log(JSON.stringify(validate.errors, null, 2));
process.exit(ok ? 0 : 1);
