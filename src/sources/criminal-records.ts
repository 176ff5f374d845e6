/** Criminal records (criminal records search). */
export interface CriminalRecordSource {}
