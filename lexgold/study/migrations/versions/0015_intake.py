"""The study's intake: open, paused or closed, and whether raters already in may finish

``lexgold study pause|resume|close`` and the admin view set it (:mod:`lexgold.study.intake`);
the rating site reads it before taking a new rater (and, with ``stop_current``, before every
page of a rater already in).

Revision ID: 0015_intake
Revises: 0014_hashed_credentials
Create Date: 2026-11-27
"""
import sqlalchemy as sa
from alembic import op

revision = '0015_intake'
down_revision = '0014_hashed_credentials'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('study', schema=None) as batch_op:
        batch_op.add_column(sa.Column('intake', sa.String(length=20), nullable=False,
                                      server_default='open'))
        batch_op.add_column(sa.Column('stop_current', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
        batch_op.add_column(sa.Column('intake_changed_at', sa.DateTime(), nullable=True))


def downgrade():
    with op.batch_alter_table('study', schema=None) as batch_op:
        batch_op.drop_column('intake_changed_at')
        batch_op.drop_column('stop_current')
        batch_op.drop_column('intake')
