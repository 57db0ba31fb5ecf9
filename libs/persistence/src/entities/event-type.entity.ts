import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A declared event type of an organization (the catalog, ADR 0031). */
@Entity('event_types')
export class EventTypeEntity {
  @PrimaryColumn({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @PrimaryColumn('text') name!: string;
  @Column('text') description!: string;
  /** A JSON Schema (2020-12): an object, or a boolean; null for none. */
  @Column({ type: 'jsonb', nullable: true }) schema!: Record<string, unknown> | boolean | null;
  @Column({ type: 'jsonb', nullable: true }) example!: Record<string, unknown> | null;
  @Column('boolean') deprecated!: boolean;
  @Column('boolean') archived!: boolean;
  /** Grows by one with every change: a compiled schema of an older version is stale. */
  @Column('integer') version!: number;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
