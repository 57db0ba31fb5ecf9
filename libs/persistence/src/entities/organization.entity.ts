import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Plan } from '@hookbase/domain';

@Entity('organizations')
export class OrganizationEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text') name!: string;
  @Column('text') plan!: Plan;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
