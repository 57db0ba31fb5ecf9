import catalog from './topic-catalog.json';

export interface TopicSpec {
  name: string;
  partitions: number;
  config: Record<string, string>;
}

/** The topic names of one installation, all under its prefix. */
export interface TopicNames {
  events: string;
  /** Records read from `events` that could not be accepted, with the reason. */
  eventsInvalid: string;
  deliveries: string;
  dlq: string;
}

export function topicNames(prefix: string): TopicNames {
  return {
    events: `${prefix}.events`,
    eventsInvalid: `${prefix}.events.invalid`,
    deliveries: `${prefix}.deliveries`,
    dlq: `${prefix}.dlq`,
  };
}

/** Partitions by topic suffix that replace the catalog's (HOOKBASE_*_PARTITIONS). */
export type PartitionOverrides = Partial<Record<string, number>>;

export function topicSpecs(prefix: string, partitions: PartitionOverrides = {}): TopicSpec[] {
  return catalog.topics.map((topic) => ({
    name: `${prefix}.${topic.suffix}`,
    partitions: partitions[topic.suffix] ?? topic.partitions,
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
