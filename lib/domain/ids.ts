/** Longest board, user or organization id, in characters (the API and the admin CLI apply the same rule). */
export const MAX_ID_LENGTH = 256;
