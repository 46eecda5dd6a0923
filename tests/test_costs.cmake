# Read by ctest after the discovered gtest lists (TEST_INCLUDE_FILES): the
# seconds the longest gtest cases took in a clean-clone CI run on 2 cores
# (2026-11-27), as their COST (the script tests get theirs in
# tests/CMakeLists.txt). `ctest -j` starts the costliest tests first; a clean
# build has no timing history, so without these it started tests in the
# order they were declared, and the long ones declared last ran alone at the
# end. Only the order changes; ctest passes over a name that this build
# lacks.
set(edl_test_costs
  Allreduce.CnnSurvivesAKill9AndAJoinerLosingNothingAndRedoingAtMostOneStepPerChange 250
  EdlOnKube.TrainsWithAllreduceThroughAWorkerPodDeletion 146
  EdlOnKube.AMasterPodDeletedMidJobIsReplacedAndContinuesFromItsConfigMap 54
  EdlOnKube.TrainsTheCnnThroughAPodDeletionAPreemptionAndAKilledPs 46
  Distributed.ScalesOneToThreeToTwoWorkersAndSigtermHandsTheTaskBack 32
  ZooResnet50.LearnsThePlantedTaskWithBottleneckBlocks 29
  ZooMobilenet.LearnsThePlantedTaskWithDepthwiseConvolutions 45
  Allreduce.ASilentWorkerIsDroppedByHeartbeatAndTheRingGoesOn 22
  EdlOnKube.AMasterPodDeletedMidJobIsReplacedAndContinuesFromTheCheckpointVolume 19
  Distributed.AKilledPsRestartsFromItsCheckpoint 18
  TfjsRoundTrip.ZooModelsExportedByEdlPredictTheSameInTfjs 14
  Distributed.AWorkerKilledMidEpochIsReplacedAndNoRecordIsLost 13
  TfjsRoundTrip.EdlExportsOfTfjsBuiltModelsPredictTheSameInTfjs 11
  Recurrent.GradientsMatchFiniteDifferencesOnBothPaths 10
  DataScale.EveryProcessOfAJobStaysWithinABoundItsDataSetExceedsEightfold 10)
while(edl_test_costs)
  list(POP_FRONT edl_test_costs name cost)
  set_tests_properties("${name}" PROPERTIES COST ${cost})
endwhile()
