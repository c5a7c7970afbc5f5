#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <fcntl.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(int argc,char**argv){int sl=atoi(argv[1]);char p[256];
 for(int r=0;r<5;r++){ mkdir("/tmp/mdt/c",0775); mkdir("/tmp/mdt/c/test-dir.0-0",0775); mkdir("/tmp/mdt/c/test-dir.0-0/mdtest_tree.0.0",0775);
  for(int i=0;i<10;i++){sprintf(p,"/tmp/mdt/c/test-dir.0-0/mdtest_tree.0.0/file.mdtest.0.%d",i);close(open(p,O_CREAT|O_RDWR,0664));}
  for(int i=0;i<10;i++){sprintf(p,"/tmp/mdt/c/test-dir.0-0/mdtest_tree.0.0/file.mdtest.0.%d",i);unlink(p);}
  if(sl) usleep(sl); {double s0=now(); while(now()-s0<atoi(argv[2]));}
  double a=now(); rmdir("/tmp/mdt/c/test-dir.0-0/mdtest_tree.0.0"); double b=now();
  printf("sleep %d us: rmdir %.1f us\n",sl,b-a); rmdir("/tmp/mdt/c/test-dir.0-0"); rmdir("/tmp/mdt/c");}
}
