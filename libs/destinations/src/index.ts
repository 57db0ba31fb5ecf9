export * from './destination.adapter';
export * from './guarded-lookup';
export * from './http.adapter';
