"""The pytest plugin's parts; `kafkatest.pytest_plugin` is the module pytest loads."""
