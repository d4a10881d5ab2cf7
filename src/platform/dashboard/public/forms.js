// Forms made from the contract's request schemas: one labelled control per property, its label
// the property's name and its hint the property's description. The browser judges nothing
// (forms are `novalidate`): the platform validates against the same contract and its
// `error_message`, which names the field (`urls.complete_order`, `allowed_ips[1]`), is shown
// next to that field.
import { deref } from './contract.js';

let fieldCount = 0;

/** The schema's type without `null`, and whether `null` is allowed. */
function typeOf(schema) {
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const nullable = types.includes('null') || schema.nullable === true;
  const concrete = types.filter((type) => type !== 'null');
  if (concrete.length === 0 && schema.properties) return { type: 'object', nullable };
  if (concrete.length === 0 && Array.isArray(schema.enum)) return { type: 'string', nullable };
  return { type: concrete[0] ?? 'string', nullable };
}

/** A schema with `allOf` merged and `oneOf`/`anyOf` reduced to their first non-null branch. */
export function flatten(contract, node) {
  const schema = { ...(deref(contract, node) ?? {}) };
  // A `$ref` with a sibling description (`urls.create_order_payment`: "E3.") says more than the target.
  if (node && typeof node === 'object' && node.$ref && node.description) schema.description = node.description;
  for (const part of schema.allOf ?? []) {
    const merged = flatten(contract, part);
    schema.properties = { ...(schema.properties ?? {}), ...(merged.properties ?? {}) };
    schema.type ??= merged.type;
  }
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches && !schema.type && !schema.properties) {
    const branch = branches.map((each) => flatten(contract, each)).find((each) => each.type !== 'null');
    if (branch) return { ...branch, description: schema.description ?? branch.description };
  }
  return schema;
}

function hint(text) {
  const small = document.createElement('small');
  small.className = 'hint';
  small.id = `hint-${(fieldCount += 1)}`;
  // Descriptions are Markdown; the hint shows the first sentence as plain text.
  small.textContent = String(text)
    .replace(/`/g, '')
    .split(/\n\s*\n/)[0]
    .trim();
  return small;
}

function errorSlot(path) {
  const slot = document.createElement('p');
  slot.className = 'field-error';
  slot.id = `error-${(fieldCount += 1)}`;
  slot.dataset.errorFor = path;
  slot.hidden = true;
  return slot;
}

/**
 * Controls for the properties of an object schema, filled with `value`. `skip` lists the
 * property names the page shows elsewhere (identities, secrets).
 */
export function renderObjectFields(contract, schemaNode, value, { skip = [], prefix = '' } = {}) {
  const schema = flatten(contract, schemaNode);
  const fragment = document.createDocumentFragment();
  for (const [name, propertyNode] of Object.entries(schema.properties ?? {})) {
    if (skip.includes(name)) continue;
    const property = flatten(contract, propertyNode);
    if (property.readOnly || property.writeOnly) continue;
    const path = prefix ? `${prefix}.${name}` : name;
    const current = value && Object.hasOwn(value, name) ? value[name] : undefined;
    fragment.append(renderField(contract, property, path, name, current));
  }
  return fragment;
}

function renderField(contract, property, path, name, current) {
  const { type, nullable } = typeOf(property);
  if (type === 'object') {
    const fieldset = document.createElement('fieldset');
    fieldset.dataset.path = path;
    fieldset.dataset.kind = 'object';
    const legend = document.createElement('legend');
    legend.textContent = name;
    fieldset.append(legend);
    if (property.description) fieldset.append(hint(property.description));
    fieldset.append(renderObjectFields(contract, property, current, { prefix: path }));
    fieldset.append(errorSlot(path));
    return fieldset;
  }
  const wrapper = document.createElement('div');
  wrapper.className = `field field-${type}`;
  const id = `field-${(fieldCount += 1)}`;
  const label = document.createElement('label');
  label.htmlFor = id;
  label.textContent = name;
  let control;
  if (type === 'boolean') {
    control = document.createElement('input');
    control.type = 'checkbox';
    control.checked = current === true;
  } else if (Array.isArray(property.enum)) {
    control = document.createElement('select');
    if (nullable || current === undefined) control.append(new Option('—', ''));
    for (const option of property.enum.filter((each) => each !== null)) control.append(new Option(String(option), String(option)));
    control.value = current === undefined || current === null ? '' : String(current);
  } else if (type === 'array') {
    control = document.createElement('textarea');
    control.rows = 3;
    control.value = Array.isArray(current) ? current.join('\n') : '';
  } else {
    control = document.createElement('input');
    const isUrl = property.format === 'uri' || /\^https\?/.test(String(property.pattern ?? ''));
    control.type = isUrl ? 'url' : 'text';
    if (type === 'integer' || type === 'number') control.inputMode = 'numeric';
    control.value = current === undefined || current === null ? '' : String(current);
    control.spellcheck = false;
    control.autocomplete = 'off';
  }
  control.id = id;
  control.name = path;
  control.dataset.path = path;
  control.dataset.kind = type;
  if (nullable) control.dataset.nullable = 'true';
  const described = [];
  const parts = [label, control];
  if (type === 'array') {
    const each = document.createElement('small');
    each.className = 'hint';
    each.id = `hint-${(fieldCount += 1)}`;
    each.textContent = 'One entry per line.';
    parts.push(each);
    described.push(each.id);
  }
  if (property.description) {
    const small = hint(property.description);
    parts.push(small);
    described.push(small.id);
  }
  const slot = errorSlot(path);
  parts.push(slot);
  described.push(slot.id);
  control.setAttribute('aria-describedby', described.join(' '));
  if (type === 'boolean') {
    wrapper.classList.add('field-check');
    wrapper.append(control, label, ...parts.slice(2));
  } else {
    wrapper.append(...parts);
  }
  return wrapper;
}

/** What a control holds, as the schema's type: text, an array of lines, a boolean, a number. */
function controlValue(control) {
  switch (control.dataset.kind) {
    case 'boolean':
      return control.checked;
    case 'array':
      return control.value
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '');
    case 'integer':
    case 'number': {
      const text = control.value.trim();
      return text === '' ? null : /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : control.value;
    }
    default:
      return control.value === '' ? null : control.value;
  }
}

/** The value as a control shows it when the record has none (false, no lines, empty). */
function shownAs(kind, value) {
  if (value !== undefined && value !== null) return value;
  return kind === 'boolean' ? false : kind === 'array' ? [] : null;
}

/**
 * The change the form makes to `record`, as a merge-patch body: only the members whose value
 * differs, objects one level deep (`urls.complete_order` alone when only it changed). A text
 * field emptied sends `null`, which the contract accepts or refuses. Empty when nothing changed.
 */
export function changes(form, record) {
  const result = {};
  for (const control of form.querySelectorAll('[data-path][data-kind]:not(fieldset)')) {
    const path = control.dataset.path.split('.');
    const before = path.reduce((at, key) => (at && typeof at === 'object' && Object.hasOwn(at, key) ? at[key] : undefined), record);
    const value = controlValue(control);
    if (JSON.stringify(shownAs(control.dataset.kind, before)) === JSON.stringify(value)) continue;
    let at = result;
    for (const key of path.slice(0, -1)) at = at[key] ??= {};
    at[path.at(-1)] = value;
  }
  return result;
}

/** Hides every error shown in the form. */
export function clearErrors(form) {
  for (const slot of form.querySelectorAll('.field-error')) {
    slot.hidden = true;
    slot.textContent = '';
  }
  for (const control of form.querySelectorAll('[aria-invalid]')) control.removeAttribute('aria-invalid');
}

/**
 * Shows the platform's `error_message` next to the field it names (the longest field path the
 * message starts with, array indices aside), or in the form's own alert when it names none.
 */
export function showError(form, answer) {
  clearErrors(form);
  const message = answer?.error_message ?? `the platform answered HTTP ${answer?.status ?? '?'}`;
  const code = answer?.error_code;
  const subject = message.replace(/\[\d+\]/g, '');
  const slots = [...form.querySelectorAll('.field-error[data-error-for]')]
    .filter((slot) => {
      const path = slot.dataset.errorFor;
      return subject.startsWith(path) && !/[\w]/.test(subject.charAt(path.length));
    })
    .sort((a, b) => b.dataset.errorFor.length - a.dataset.errorFor.length);
  const slot = slots[0] ?? form.querySelector('.form-error');
  if (!slot) return;
  slot.textContent = code ? `${message} (${code})` : message;
  slot.hidden = false;
  slot.setAttribute('role', 'alert');
  const control = form.querySelector(`[data-path="${CSS.escape(slot.dataset.errorFor ?? '')}"]:not(fieldset)`);
  if (control) {
    control.setAttribute('aria-invalid', 'true');
    control.focus();
  }
}
