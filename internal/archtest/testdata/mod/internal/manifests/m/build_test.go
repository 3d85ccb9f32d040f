package m

import _ "example.com/mod/internal/controller/c"
