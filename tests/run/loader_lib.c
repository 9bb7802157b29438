/* loader_lib.c -- the library loader.c opens: three calls to cos. */
#include <math.h>

double three_cosines(double x)
{
  return cos(x) + cos(2 * x) + cos(3 * x);
}
