INSERT INTO notes (body, created_at) VALUES ('Buy oat milk', 1772355600000);
INSERT INTO notes (body, created_at) VALUES ('Call the plumber about the kitchen tap', 1772370000000);
