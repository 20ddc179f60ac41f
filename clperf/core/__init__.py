"""The ground every layer stands on: records, the scenario language, configuration, stores,
the tolerant front end and the clang compile."""
