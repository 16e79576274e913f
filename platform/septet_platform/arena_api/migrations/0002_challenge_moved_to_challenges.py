# The Challenge model moved to the challenges app (issue 26, item 6). Only Django's record of the
# models changes here: the tables arena_api_challenge and arena_api_challenge_matches stay as they
# are, with their rows, and challenges.Challenge names them (its db_table), from challenges 0001.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('arena_api', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='Challenge'),
            ],
            database_operations=[],
        ),
    ]
