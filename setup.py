"""The egg scrapyd runs (``scrapyd-deploy`` builds it from this file).

Only the ``govsi`` package goes in: tests, testkit, benchmarks and scripts stay behind, and so do
settings files with secrets (there are none; CRAWLDB_URL comes from the node's
environment or from ``setting=`` at schedule time).
"""

from setuptools import find_packages, setup

setup(
    name="govsi",
    version="1.0",
    packages=find_packages(include=["govsi", "govsi.*"]),
    # Alembic reads its scripts as files, not as a package; scrapyd imports the egg as a zip,
    # and govsi.store.database extracts the migrations from it.
    package_data={
        "govsi.store": ["migrations/*.py", "migrations/*.mako", "migrations/versions/*.py"],
        # The report's page template, script, style and the vendored Cytoscape.js.
        "govsi.report": ["templates/*.j2", "static/*"],
        # The search page's template.
        "govsi.search": ["templates/*.j2"],
        # The Changes pages' templates.
        "govsi.changes": ["templates/*.j2"],
    },
    entry_points={"scrapy": ["settings = govsi.settings"]},
    zip_safe=False,
)
