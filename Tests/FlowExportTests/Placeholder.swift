// Tests for HAR, curl and raw export go here (issue 4).
