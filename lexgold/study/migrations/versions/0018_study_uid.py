"""A study's own random identity (issue 48): ``study.uid``, which every preview link signs and
is checked against, so that a link made for one study opens no other study served with the same
session-signing key. An existing study is given a fresh one (its earlier links stop working:
they named no study).

Revision ID: 0018_study_uid
Revises: 0017_machine
Create Date: 2026-11-29
"""
import secrets

from alembic import op
import sqlalchemy as sa


revision = '0018_study_uid'
down_revision = '0017_machine'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('study', schema=None) as batch_op:
        batch_op.add_column(sa.Column('uid', sa.String(length=32), nullable=False,
                                      server_default=''))
    study = sa.table('study', sa.column('uid', sa.String))
    op.execute(study.update().values(uid=secrets.token_hex(16)))


def downgrade():
    with op.batch_alter_table('study', schema=None) as batch_op:
        batch_op.drop_column('uid')
