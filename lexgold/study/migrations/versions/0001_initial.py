"""Initial schema: study, pairs, tranches, steps, items, slots, raters, answers

Revision ID: 0001
Revises: 
Create Date: 2026-11-21
"""
from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('pair',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('word1', sa.String(length=300), nullable=False),
    sa.Column('word2', sa.String(length=300), nullable=False),
    sa.Column('pos', sa.String(length=20), nullable=False),
    sa.Column('topic', sa.String(length=500), nullable=False),
    sa.Column('consistency', sa.Boolean(), nullable=False),
    sa.Column('extra', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('rater',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('public_id', sa.String(length=64), nullable=False),
    sa.Column('platform', sa.String(length=20), nullable=False),
    sa.Column('external_id', sa.String(length=100), nullable=True),
    sa.Column('external_study', sa.String(length=100), nullable=False),
    sa.Column('external_session', sa.String(length=100), nullable=False),
    sa.Column('stage', sa.String(length=20), nullable=False),
    sa.Column('instructions_page', sa.Integer(), nullable=False),
    sa.Column('native_speaker', sa.Boolean(), nullable=False),
    sa.Column('qualification_choice', sa.Integer(), nullable=True),
    sa.Column('slot_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('completed_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('platform', 'external_id'),
    sa.UniqueConstraint('public_id')
    )
    op.create_table('study',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('protocol_name', sa.String(length=200), nullable=False),
    sa.Column('protocol_text', sa.Text(), nullable=False),
    sa.Column('protocol_sha256', sa.String(length=64), nullable=False),
    sa.Column('pairs_sha256', sa.String(length=64), nullable=False),
    sa.Column('config', sa.JSON(), nullable=False),
    sa.Column('report', sa.JSON(), nullable=False),
    sa.Column('seed', sa.Integer(), nullable=False),
    sa.Column('secret_key', sa.String(length=128), nullable=False),
    sa.Column('completion_code', sa.String(length=100), nullable=False),
    sa.Column('screenout_code', sa.String(length=100), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('tranche',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('n_steps', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('number')
    )
    op.create_table('slot',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tranche_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('rater_id', sa.Integer(), nullable=True),
    sa.Column('claimed_at', sa.DateTime(), nullable=True),
    sa.Column('expires_at', sa.DateTime(), nullable=True),
    sa.Column('step', sa.Integer(), nullable=False),
    sa.Column('completed_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['rater_id'], ['rater.id'], ),
    sa.ForeignKeyConstraint(['tranche_id'], ['tranche.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('tranche_id', 'number')
    )
    with op.batch_alter_table('slot', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_slot_tranche_id'), ['tranche_id'], unique=False)

    op.create_table('step',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tranche_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('batch', sa.String(length=500), nullable=False),
    sa.Column('checkpoint', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['tranche_id'], ['tranche.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('tranche_id', 'position')
    )
    with op.batch_alter_table('step', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_step_tranche_id'), ['tranche_id'], unique=False)

    op.create_table('checkpoint_answer',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('rater_id', sa.Integer(), nullable=False),
    sa.Column('step_id', sa.Integer(), nullable=False),
    sa.Column('slot_id', sa.Integer(), nullable=False),
    sa.Column('choice', sa.Integer(), nullable=False),
    sa.Column('correct', sa.Boolean(), nullable=False),
    sa.Column('response_ms', sa.Integer(), nullable=True),
    sa.Column('answered_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['rater_id'], ['rater.id'], ),
    sa.ForeignKeyConstraint(['slot_id'], ['slot.id'], ),
    sa.ForeignKeyConstraint(['step_id'], ['step.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('rater_id', 'step_id')
    )
    with op.batch_alter_table('checkpoint_answer', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_checkpoint_answer_rater_id'), ['rater_id'], unique=False)

    op.create_table('item',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('step_id', sa.Integer(), nullable=False),
    sa.Column('tranche_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('pair_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.ForeignKeyConstraint(['pair_id'], ['pair.id'], ),
    sa.ForeignKeyConstraint(['step_id'], ['step.id'], ),
    sa.ForeignKeyConstraint(['tranche_id'], ['tranche.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('step_id', 'position')
    )
    with op.batch_alter_table('item', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_item_step_id'), ['step_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_item_tranche_id'), ['tranche_id'], unique=False)

    op.create_table('answer',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('rater_id', sa.Integer(), nullable=False),
    sa.Column('item_id', sa.Integer(), nullable=False),
    sa.Column('slot_id', sa.Integer(), nullable=False),
    sa.Column('rating', sa.Integer(), nullable=False),
    sa.Column('start_value', sa.Integer(), nullable=True),
    sa.Column('response_ms', sa.Integer(), nullable=True),
    sa.Column('answered_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['item_id'], ['item.id'], ),
    sa.ForeignKeyConstraint(['rater_id'], ['rater.id'], ),
    sa.ForeignKeyConstraint(['slot_id'], ['slot.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('rater_id', 'item_id')
    )
    with op.batch_alter_table('answer', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_answer_rater_id'), ['rater_id'], unique=False)



def downgrade():
    with op.batch_alter_table('answer', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_answer_rater_id'))

    op.drop_table('answer')
    with op.batch_alter_table('item', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_item_tranche_id'))
        batch_op.drop_index(batch_op.f('ix_item_step_id'))

    op.drop_table('item')
    with op.batch_alter_table('checkpoint_answer', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_checkpoint_answer_rater_id'))

    op.drop_table('checkpoint_answer')
    with op.batch_alter_table('step', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_step_tranche_id'))

    op.drop_table('step')
    with op.batch_alter_table('slot', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_slot_tranche_id'))

    op.drop_table('slot')
    op.drop_table('tranche')
    op.drop_table('study')
    op.drop_table('rater')
    op.drop_table('pair')
