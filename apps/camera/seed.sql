INSERT INTO settings (key, value) VALUES ('mode', 'photo'), ('flash', 'auto'), ('lens', 'back');
