// Tests for the filter language go here (issue 4).
