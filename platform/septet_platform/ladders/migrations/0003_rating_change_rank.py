from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ladders", "0002_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="ratingchange",
            name="rank",
            field=models.PositiveSmallIntegerField(
                default=0, help_text="the rank the update used: the seat's, or its duplicate set's (1 = best)"
            ),
        ),
    ]
