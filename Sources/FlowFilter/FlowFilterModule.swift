// The filter language lives here (issue 4); see CLAUDE.md.
