"""Taking a generated project to a host: read it (``project``), try it from the shell
(``call``), install it into a host's config (``install``), bundle it (``bundle``), develop it
(``dev``) and grow its manifest (``add``). ``commands`` holds the click commands."""
