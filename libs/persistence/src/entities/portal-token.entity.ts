import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A portal token, by its hash only: the token itself is shown once, when it is issued. */
@Entity('portal_tokens')
export class PortalTokenEntity {
  @PrimaryColumn('text') id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'application_id', type: 'text' }) applicationId!: string;
  @Column({ name: 'token_hash', type: 'text' }) tokenHash!: string;
  @Column({ name: 'read_only', type: 'boolean' }) readOnly!: boolean;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'expires_at', type: 'timestamptz' }) expiresAt!: Date;
  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true }) revokedAt!: Date | null;
}
