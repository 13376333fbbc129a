/** The automation rules live in the policies module; this path stays for its callers. */
export * from '../policies/automations.ts';
