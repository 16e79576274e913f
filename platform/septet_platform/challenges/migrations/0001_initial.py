# The Challenge model, moved here from the Arena's app (issue 26, item 6). Its tables were made by
# arena_api 0001 and are kept as they are, rows and all: this migration only records the model in
# this app (SeparateDatabaseAndState, no database operation), after arena_api 0002 has dropped it
# from that app's record, and moves its content type (so its permissions and admin log entries
# follow it) when the database already has one.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def content_type_moved(apps, schema_editor):
    _content_type_relabelled(apps, schema_editor, old='arena_api', new='challenges')


def content_type_moved_back(apps, schema_editor):
    _content_type_relabelled(apps, schema_editor, old='challenges', new='arena_api')


def _content_type_relabelled(apps, schema_editor, *, old, new):
    content_types = apps.get_model('contenttypes', 'ContentType').objects.using(schema_editor.connection.alias)
    if not content_types.filter(app_label=new, model='challenge').exists():
        content_types.filter(app_label=old, model='challenge').update(app_label=new)


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('arena_api', '0002_challenge_moved_to_challenges'),
        ('bots', '0004_bot_accepts_challenges'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('ladders', '0003_rating_change_rank'),
        ('matches', '0004_seat_log'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Challenge',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('sets', models.PositiveSmallIntegerField()),
                        ('created', models.DateTimeField(auto_now_add=True)),
                        ('challenger', models.ForeignKey(help_text="the requester's bot whose results the challenge reports against the others", on_delete=django.db.models.deletion.PROTECT, related_name='challenges_made', to='bots.botversion')),
                        ('ladder', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='challenges', to='ladders.ladder')),
                        ('matches', models.ManyToManyField(db_table='arena_api_challenge_matches', related_name='challenges', to='matches.match')),
                        ('requester', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='challenges', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'arena_api_challenge',
                        'ordering': ['-id'],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_type_moved, content_type_moved_back, elidable=True),
    ]
