/** E-commerce stores with technologies and apps (store leads, tech stack). */
export interface StoreSource {}
