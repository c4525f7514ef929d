INSERT INTO settings (key, value) VALUES ('album_columns', '2'), ('photo_columns', '3');
