from streamfold.launcher import main

main()
