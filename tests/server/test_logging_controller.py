"""LoggingController: Python loggers seen and set with log4j's level names."""

from __future__ import annotations

import logging

import pytest

from franz.server import logging_controller


@pytest.fixture
def a_logger():
    found = logging.getLogger("franz.test.logging_controller")
    yield found
    found.setLevel(logging.NOTSET)


@pytest.mark.parametrize(("level", "name"), [(logging.CRITICAL, "FATAL"), (logging.ERROR, "ERROR"),
                                             (logging.WARNING, "WARN"), (logging.INFO, "INFO"),
                                             (logging.DEBUG, "DEBUG"), (logging_controller.TRACE, "TRACE"),
                                             (15, "INFO"), (1, "TRACE")])
def test_python_levels_have_log4j_names(level, name):
    assert logging_controller.level_name(level) == name


def test_loggers_list_root_first_and_every_logger_at_its_effective_level(a_logger):
    logging.getLogger("franz.test.logging_controller.child")
    named = logging_controller.loggers()
    assert next(iter(named)) == logging_controller.ROOT_LOGGER
    assert named["franz.test.logging_controller"] == logging_controller.level_name(a_logger.getEffectiveLevel())
    # "franz.test" is only the parent of loggers that exist: a placeholder, not a logger.
    assert isinstance(logging.Logger.manager.loggerDict["franz.test"], logging.PlaceHolder)
    assert "franz.test" not in named and not logging_controller.logger_exists("franz.test")


def test_a_level_set_holds_for_the_children_and_unsetting_it_restores_the_parents(a_logger):
    child = logging.getLogger("franz.test.logging_controller.child")
    logging_controller.set_level("franz.test.logging_controller", "TRACE")
    assert logging_controller.loggers()["franz.test.logging_controller.child"] == "TRACE"
    assert child.isEnabledFor(logging_controller.TRACE)
    logging_controller.unset_level("franz.test.logging_controller")
    assert a_logger.level == logging.NOTSET
    assert logging_controller.loggers()["franz.test.logging_controller"] == \
           logging_controller.level_name(logging.getLogger("franz.test").getEffectiveLevel())


def test_only_loggers_that_exist_exist():
    assert logging_controller.logger_exists("root")
    assert not logging_controller.logger_exists("no.such.logger.anywhere")
