import catalog from './topic-catalog.json';

export interface TopicSpec {
  name: string;
  partitions: number;
  config: Record<string, string>;
}

/** The topic names of one installation: `<prefix>.events`, `<prefix>.deliveries`, `<prefix>.dlq`. */
export interface TopicNames {
  events: string;
  deliveries: string;
  dlq: string;
}

export function topicNames(prefix: string): TopicNames {
  return { events: `${prefix}.events`, deliveries: `${prefix}.deliveries`, dlq: `${prefix}.dlq` };
}

export function topicSpecs(prefix: string): TopicSpec[] {
  return catalog.topics.map((topic) => ({
    name: `${prefix}.${topic.suffix}`,
    partitions: topic.partitions,
    config: topic.config as Record<string, string>,
  }));
}

/** Consumer groups are named after the prefix too, so installations sharing a broker stay apart. */
export function consumerGroup(
  prefix: string,
  role: 'fanout' | 'dispatcher' | 'dlq-handler',
): string {
  return `${prefix}.${role}`;
}
