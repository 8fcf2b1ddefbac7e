BEGIN
/x > 1/;
