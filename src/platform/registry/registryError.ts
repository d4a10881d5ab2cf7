/** The registry file is unreadable or breaks its schema or its cross-references. */
export class RegistryError extends Error {}
