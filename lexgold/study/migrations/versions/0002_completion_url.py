"""Study completion URL: send raters back to their platform with the completion code

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""
from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('study', schema=None) as batch_op:
        batch_op.add_column(sa.Column('completion_url', sa.String(length=500), nullable=False,
                                      server_default=''))


def downgrade():
    with op.batch_alter_table('study', schema=None) as batch_op:
        batch_op.drop_column('completion_url')
