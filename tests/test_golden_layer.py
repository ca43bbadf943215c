"""The model layer holds the model only: no plotting, no images, no command-line syntax."""

import re
from pathlib import Path

import fatnet.golden

GOLDEN = Path(fatnet.golden.__file__).parent


def _sources():
    return sorted(GOLDEN.rglob("*.py"))


def test_the_model_draws_nothing_and_ships_no_image():
    drawing = [p.name for p in _sources() if "matplotlib" in p.read_text()]
    images = [p.name for p in GOLDEN.rglob("*") if p.suffix in (".png", ".pdf", ".svg")]
    assert drawing == [] and images == [], (drawing, images)


def test_the_models_errors_name_parameters_not_options():
    # an error line of the model starts with the parameter (message_bits, stuck_links),
    # never with an option's spelling (message-bits, --stuck-link)
    flag_worded = re.compile(r"Error\(\s*f?\"(--)?[a-z]+(-[a-z]+)+ (must|needs|names)")
    found = [f"{p.relative_to(GOLDEN)}: {m.group(0)}" for p in _sources()
             for m in flag_worded.finditer(p.read_text())]
    assert found == [], found


def test_the_model_parses_no_command_line():
    argparse_users = [p.name for p in _sources() if re.search(r"^import argparse|^from argparse",
                                                              p.read_text(), re.M)]
    assert argparse_users == [], argparse_users
