/** The artifact, conversation and pod rules live in the policies module; this path stays for its callers. */
export * from '../policies/artifacts.ts';
