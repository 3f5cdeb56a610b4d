// HAR, curl and raw exchange formats live here (issue 4); see CLAUDE.md.
