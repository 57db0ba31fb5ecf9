import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** An API key is stored as its SHA-256 only; the key itself is shown once, at creation. */
@Entity('api_keys')
@Index('idx_api_keys_organization', ['organizationId'])
export class ApiKeyEntity {
  @PrimaryColumn('text') id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Index('uq_api_keys_key_hash', { unique: true })
  @Column({ name: 'key_hash', type: 'text' })
  keyHash!: string;
  @Column({ name: 'key_prefix', type: 'text' }) keyPrefix!: string;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true }) revokedAt!: Date | null;
  @Column({ type: 'text', nullable: true }) name!: string | null;
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true }) expiresAt!: Date | null;
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true }) lastUsedAt!: Date | null;
}
