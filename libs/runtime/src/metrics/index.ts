export * from './hookbase-metrics';
export * from './metric-recorders';
