"""The README stays a guide and the pages under docs/ stay true to the tree: the README is
short, the file map of docs/how-it-works.md names every source file there is and none
that is not, every relative link leads somewhere, and no page cites a file outside the
repository."""

import fnmatch
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / 'README.md'
DOCS = sorted((ROOT / 'docs').glob('*.md'))
PAGES = [README] + DOCS
HOW = ROOT / 'docs' / 'how-it-works.md'
MAX_README_LINES = 450
SOURCE_PATTERNS = ('*.cc', '*.h', '*.py', '*.cu', '*.html')


def _tracked_sources():
    listed = subprocess.run(['git', '-C', str(ROOT), 'ls-files', 'src', 'python'],
                            capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip('not a git checkout')
    return sorted(p for p in listed.stdout.split()
                  if any(fnmatch.fnmatch(p.rsplit('/', 1)[-1], pat) for pat in SOURCE_PATTERNS))


def _file_map_paths():
    """Every path in backticks in the rows of the file map's table."""
    text = HOW.read_text()
    assert '## File map' in text
    table = text.split('## File map', 1)[1]
    rows = [line for line in table.splitlines() if line.startswith('|')]
    assert len(rows) > 2, 'the file map has no table'
    paths = []
    for row in rows:
        files = row.split('|')[2] if row.count('|') >= 4 else ''
        paths += re.findall(r'`([^`\s]+)`', files)
    return paths


def test_the_readme_is_a_guide_not_a_notebook():
    lines = README.read_text().count('\n')
    assert lines <= MAX_README_LINES, f'README.md has {lines} lines; move detail to docs/'


def test_the_file_map_names_every_source_file():
    named = set(_file_map_paths())
    missing = [p for p in _tracked_sources() if p not in named]
    assert not missing, 'docs/how-it-works.md does not name: ' + ', '.join(missing)


def test_the_file_map_names_no_file_that_does_not_exist():
    # A glob (benchmarks/*) must match something; a plain path must be there.
    absent = [p for p in _file_map_paths()
              if not (list(ROOT.glob(p)) if '*' in p else (ROOT / p).exists())]
    assert not absent, 'docs/how-it-works.md names missing files: ' + ', '.join(absent)


def _anchors(page):
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces
    as hyphens (code fences skipped, where # starts a comment)."""
    text = re.sub(r'^```.*?^```', '', page.read_text(), flags=re.M | re.S)
    anchors = set()
    for heading in re.findall(r'^#{1,6} +(.+?) *$', text, flags=re.M):
        slug = re.sub(r'[^\w\- ]', '', heading.lower()).replace(' ', '-')
        anchors.add(slug)
    return anchors


def _links(page):
    """The targets of a page's markdown links and images, outside code blocks and spans."""
    text = re.sub(r'^```.*?^```', '', page.read_text(), flags=re.M | re.S)
    text = re.sub(r'`[^`\n]*`', '', text)
    return re.findall(r'\]\(([^)\s]+)\)', text)


@pytest.mark.parametrize('page', PAGES, ids=lambda p: p.name)
def test_every_relative_link_leads_somewhere(page):
    for target in _links(page):
        if re.match(r'[a-z]+:', target):
            continue  # https:, mailto:: not ours to check offline
        path, _, anchor = target.partition('#')
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f'{page.name}: link to {target}: no such file'
        assert ROOT in dest.parents or dest == ROOT, f'{page.name}: {target} leaves the repository'
        if anchor and dest.suffix == '.md':
            assert anchor in _anchors(dest), f'{page.name}: link to {target}: no such heading'


@pytest.mark.parametrize('page', PAGES, ids=lambda p: p.name)
def test_no_page_cites_a_file_outside_the_repository(page):
    # Readers of a clone have neither.
    text = page.read_text()
    for outside in ('../shared', 'API.md'):
        assert outside not in text, f'{page.name} mentions {outside}'
