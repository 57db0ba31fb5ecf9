import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A signing secret of an endpoint. During a rotation overlap an endpoint has two. */
@Entity('endpoint_secrets')
@Index('idx_endpoint_secrets_endpoint', ['endpointId', 'createdAt'])
export class EndpointSecretEntity {
  @PrimaryColumn('text') id!: string;
  @Column({ name: 'endpoint_id', type: 'text' }) endpointId!: string;
  @Column('text') secret!: string;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  /** Null while current; set when a rotation retires it (it keeps signing until then). */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true }) expiresAt!: Date | null;
}
