"""Taking a generated project to a host: ``project``, ``call``, ``install``, ``bundle``,
``dev``, ``add``; ``commands`` holds the click commands."""
