dnl AX_PTHREAD_LITE: find the flag that enables POSIX threads.
AC_DEFUN([AX_PTHREAD_LITE],
  [AC_CACHE_CHECK([for pthread flags], [panda_cv_pthread],
     [panda_save_CFLAGS=$CFLAGS
      CFLAGS="$CFLAGS -pthread"
      AC_LINK_IFELSE([AC_LANG_PROGRAM([#include <pthread.h>],
                                      [pthread_mutex_t m;
                                       pthread_mutex_init(&m, 0);])],
                     [panda_cv_pthread=-pthread], [panda_cv_pthread=no])
      CFLAGS=$panda_save_CFLAGS])
   if test "$panda_cv_pthread" = no; then
     AC_MSG_ERROR([POSIX threads are required])
   fi
   PTHREAD_CFLAGS=$panda_cv_pthread
   AC_SUBST([PTHREAD_CFLAGS])])
