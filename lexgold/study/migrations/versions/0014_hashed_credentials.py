"""Security round 4 (issue 35, item 1): no credential in the study database

What a rater's row held in plain text and a copy of the database could replay is kept as a keyed
hash (``lexgold.study.secret.keyed_hash``, keyed by the session-signing key): the session ID
of the rater's own link (``rater.external_session``) and the pending move link
(``rater.move_sha256``, the keyed hash of the SHA-256 it held). ``lexgold study upgrade`` gives
the key (``config.attributes["lexgold_secret_key"]``); without one the values cannot be
converted and are cleared: those raters resume in another browser only through the admin
view's move link. The downgrade clears them too (a hash cannot be turned back).

Revision ID: 0014_hashed_credentials
Revises: 0013_bws
Create Date: 2026-11-27
"""
from alembic import op
import sqlalchemy as sa


revision = '0014_hashed_credentials'
down_revision = '0013_bws'
branch_labels = None
depends_on = None

RATER = sa.table('rater', sa.column('id', sa.Integer), sa.column('external_session', sa.String),
                 sa.column('move_sha256', sa.String),
                 sa.column('move_expires_at', sa.DateTime))
#: MTurk's preview assignment ID, which every worker has: no credential
PREVIEW = 'ASSIGNMENT_ID_NOT_AVAILABLE'


def upgrade():
    from lexgold.study.secret import keyed_hash

    key = op.get_context().config.attributes.get('lexgold_secret_key') \
        if op.get_context().config is not None else None
    connection = op.get_bind()
    rows = connection.execute(sa.select(RATER.c.id, RATER.c.external_session, RATER.c.move_sha256)
                              .where((RATER.c.external_session != '') |
                                     (RATER.c.move_sha256 != ''))).all()
    for rater_id, session_id, move in rows:
        keep = key and session_id and session_id != PREVIEW
        values = {'external_session': keyed_hash(key, session_id) if keep else ''}
        if move:
            values.update({'move_sha256': keyed_hash(key, move)} if key else
                          {'move_sha256': '', 'move_expires_at': None})
        connection.execute(sa.update(RATER).where(RATER.c.id == rater_id).values(**values))


def downgrade():
    op.execute("UPDATE rater SET external_session = '', move_sha256 = '', "
               "move_expires_at = NULL")
